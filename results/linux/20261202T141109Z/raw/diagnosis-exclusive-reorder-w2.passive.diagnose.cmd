/work/main/bin/acceptlab-diagnose --port 34511 --duration 0.5 --json
