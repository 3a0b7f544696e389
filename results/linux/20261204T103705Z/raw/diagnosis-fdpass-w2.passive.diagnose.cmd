/work/main/bin/acceptlab-diagnose --port 41503 --duration 0.5 --json
