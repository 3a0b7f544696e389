/work/main/bin/acceptlab-diagnose --port 37471 --duration 0.5 --json
