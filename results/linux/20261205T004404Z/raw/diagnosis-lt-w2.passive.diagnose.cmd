/work/main/bin/acceptlab-diagnose --port 40531 --duration 0.5 --json
