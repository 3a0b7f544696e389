/work/main/bin/acceptlab-diagnose --port 38943 --duration 0.5 --json
