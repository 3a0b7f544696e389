/work/main/bin/acceptlab-diagnose --port 45741 --duration 0.5 --json
