/work/main/bin/acceptlab-diagnose --port 38135 --duration 0.5 --json
