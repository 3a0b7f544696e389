/work/main/bin/acceptlab-diagnose --port 34151 --duration 1.0 --json
