/work/main/bin/acceptlab-diagnose --port 37051 --duration 0.5 --json
