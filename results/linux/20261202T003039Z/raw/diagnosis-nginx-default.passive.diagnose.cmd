/work/main/bin/acceptlab-diagnose --port 35039 --duration 0.5 --json
