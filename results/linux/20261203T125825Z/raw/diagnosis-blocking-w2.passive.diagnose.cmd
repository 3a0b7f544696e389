/work/main/bin/acceptlab-diagnose --port 37123 --duration 0.5 --json
