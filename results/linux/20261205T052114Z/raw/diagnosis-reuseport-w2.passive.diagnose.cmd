/work/main/bin/acceptlab-diagnose --port 38559 --duration 0.5 --json
