/work/main/bin/acceptlab-diagnose --port 33297 --duration 0.5 --json
