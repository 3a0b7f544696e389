/work/main/bin/acceptlab-diagnose --port 41301 --duration 0.5 --json
