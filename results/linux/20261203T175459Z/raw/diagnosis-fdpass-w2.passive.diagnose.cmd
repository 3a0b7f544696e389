/work/main/bin/acceptlab-diagnose --port 41277 --duration 0.5 --json
