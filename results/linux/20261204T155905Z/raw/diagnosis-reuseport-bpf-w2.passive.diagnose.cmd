/work/main/bin/acceptlab-diagnose --port 40727 --duration 0.5 --json
