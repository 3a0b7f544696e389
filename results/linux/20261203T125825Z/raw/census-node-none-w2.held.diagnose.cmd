/work/main/bin/acceptlab-diagnose --port 43377 --duration 1.0 --json
