/work/main/bin/acceptlab-diagnose --port 45455 --duration 0.5 --json
