/work/main/bin/acceptlab-diagnose --port 32995 --duration 0.5 --json
