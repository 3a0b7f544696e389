/work/main/bin/acceptlab-diagnose --port 36667 --duration 0.5 --json
