/work/main/bin/acceptlab-diagnose --port 37297 --duration 0.5 --json
