/work/main/bin/acceptlab-diagnose --port 46569 --duration 0.5 --json
