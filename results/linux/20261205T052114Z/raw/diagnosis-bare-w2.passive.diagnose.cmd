/work/main/bin/acceptlab-diagnose --port 34095 --duration 0.5 --json
