/work/main/bin/acceptlab-diagnose --port 44179 --duration 0.5 --json
