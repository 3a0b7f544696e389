/work/main/bin/acceptlab-diagnose --port 44831 --duration 0.5 --json
