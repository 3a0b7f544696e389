/work/main/bin/acceptlab-diagnose --port 41607 --duration 0.5 --json
