/work/main/bin/acceptlab-diagnose --port 38455 --duration 0.5 --json
