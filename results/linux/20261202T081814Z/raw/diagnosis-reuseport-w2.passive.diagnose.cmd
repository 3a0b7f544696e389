/work/main/bin/acceptlab-diagnose --port 34195 --duration 0.5 --json
