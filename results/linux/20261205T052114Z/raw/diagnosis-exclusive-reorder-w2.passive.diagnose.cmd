/work/main/bin/acceptlab-diagnose --port 35411 --duration 0.5 --json
