/work/main/bin/acceptlab-diagnose --port 42953 --duration 0.5 --json
