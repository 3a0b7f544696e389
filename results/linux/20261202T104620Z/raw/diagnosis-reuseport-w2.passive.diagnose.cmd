/work/main/bin/acceptlab-diagnose --port 35733 --duration 0.5 --json
