/work/main/bin/acceptlab-diagnose --port 34669 --duration 0.5 --json
