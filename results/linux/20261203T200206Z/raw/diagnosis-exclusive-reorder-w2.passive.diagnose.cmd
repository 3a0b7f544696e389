/work/main/bin/acceptlab-diagnose --port 37615 --duration 0.5 --json
