/work/main/bin/acceptlab-diagnose --port 44025 --duration 0.5 --json
