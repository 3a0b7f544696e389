/work/main/bin/acceptlab-diagnose --port 33343 --duration 0.5 --json
