/work/main/bin/acceptlab-diagnose --port 37247 --duration 0.5 --json
