/work/main/bin/acceptlab-diagnose --port 34441 --duration 0.5 --json
