/work/main/bin/acceptlab-diagnose --port 45789 --duration 0.5 --json
