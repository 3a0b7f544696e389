/work/main/bin/acceptlab-diagnose --port 38047 --duration 0.5 --json
