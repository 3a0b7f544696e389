/work/main/bin/acceptlab-diagnose --port 43603 --duration 0.5 --json
