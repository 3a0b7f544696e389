/work/main/bin/acceptlab-diagnose --port 33401 --duration 0.5 --json
