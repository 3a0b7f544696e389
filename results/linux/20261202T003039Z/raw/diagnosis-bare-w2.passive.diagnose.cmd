/work/main/bin/acceptlab-diagnose --port 45937 --duration 0.5 --json
