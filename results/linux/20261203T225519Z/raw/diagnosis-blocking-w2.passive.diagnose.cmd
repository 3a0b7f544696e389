/work/main/bin/acceptlab-diagnose --port 36305 --duration 0.5 --json
