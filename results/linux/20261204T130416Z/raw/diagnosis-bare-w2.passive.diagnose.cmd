/work/main/bin/acceptlab-diagnose --port 43377 --duration 0.5 --json
