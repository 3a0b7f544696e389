/work/main/bin/acceptlab-diagnose --port 54503 --duration 1.0 --json
