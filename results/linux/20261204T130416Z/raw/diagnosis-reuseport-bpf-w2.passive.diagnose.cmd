/work/main/bin/acceptlab-diagnose --port 36225 --duration 0.5 --json
