/work/main/bin/acceptlab-diagnose --port 35647 --duration 0.5 --json
