/work/main/bin/acceptlab-diagnose --port 34225 --duration 0.5 --json
