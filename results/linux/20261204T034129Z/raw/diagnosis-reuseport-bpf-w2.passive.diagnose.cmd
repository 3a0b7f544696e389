/work/main/bin/acceptlab-diagnose --port 34725 --duration 0.5 --json
