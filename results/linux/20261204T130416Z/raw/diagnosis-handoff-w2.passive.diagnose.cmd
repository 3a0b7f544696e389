/work/main/bin/acceptlab-diagnose --port 43451 --duration 0.5 --json
