/work/main/bin/acceptlab-diagnose --port 43537 --duration 0.5 --json
