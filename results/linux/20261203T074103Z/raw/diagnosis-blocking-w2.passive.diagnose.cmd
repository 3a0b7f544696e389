/work/main/bin/acceptlab-diagnose --port 38607 --duration 0.5 --json
