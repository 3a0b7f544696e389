/work/main/bin/acceptlab-diagnose --port 44583 --duration 0.5 --json
