/work/main/bin/acceptlab-diagnose --port 34945 --duration 1.0 --json
