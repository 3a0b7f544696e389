/work/main/bin/acceptlab-diagnose --port 33123 --duration 0.5 --json
