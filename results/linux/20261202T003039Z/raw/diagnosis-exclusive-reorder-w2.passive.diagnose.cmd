/work/main/bin/acceptlab-diagnose --port 45321 --duration 0.5 --json
