/work/main/bin/acceptlab-diagnose --port 38747 --duration 0.5 --json
