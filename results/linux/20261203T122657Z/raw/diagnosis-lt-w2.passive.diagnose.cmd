/work/main/bin/acceptlab-diagnose --port 45515 --duration 0.5 --json
