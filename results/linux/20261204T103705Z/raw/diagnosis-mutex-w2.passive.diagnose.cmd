/work/main/bin/acceptlab-diagnose --port 34465 --duration 0.5 --json
