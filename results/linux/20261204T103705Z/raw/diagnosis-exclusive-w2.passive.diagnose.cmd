/work/main/bin/acceptlab-diagnose --port 33511 --duration 0.5 --json
