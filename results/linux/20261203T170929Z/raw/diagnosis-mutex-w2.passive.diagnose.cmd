/work/main/bin/acceptlab-diagnose --port 37989 --duration 0.5 --json
