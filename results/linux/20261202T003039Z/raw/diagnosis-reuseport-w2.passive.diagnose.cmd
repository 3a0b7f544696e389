/work/main/bin/acceptlab-diagnose --port 38557 --duration 0.5 --json
