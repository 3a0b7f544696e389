/work/main/bin/acceptlab-diagnose --port 33831 --duration 0.5 --json
