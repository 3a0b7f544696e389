/work/main/bin/acceptlab-diagnose --port 55959 --duration 1.0 --json
