/work/main/bin/acceptlab-diagnose --port 60595 --duration 0.5 --json
