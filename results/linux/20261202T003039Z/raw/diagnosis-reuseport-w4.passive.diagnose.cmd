/work/main/bin/acceptlab-diagnose --port 38639 --duration 0.5 --json
