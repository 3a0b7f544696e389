/work/main/bin/acceptlab-diagnose --port 45939 --duration 0.5 --json
