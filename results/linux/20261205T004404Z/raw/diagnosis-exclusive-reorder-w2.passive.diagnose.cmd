/work/main/bin/acceptlab-diagnose --port 43633 --duration 0.5 --json
