/work/main/bin/acceptlab-diagnose --port 33511 --duration 1.0 --json
