/work/main/bin/acceptlab-diagnose --port 41741 --duration 0.5 --json
