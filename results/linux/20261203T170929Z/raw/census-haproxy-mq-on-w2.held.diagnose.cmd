/work/main/bin/acceptlab-diagnose --port 35981 --duration 1.0 --json
