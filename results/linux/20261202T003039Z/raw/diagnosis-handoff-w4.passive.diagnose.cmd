/work/main/bin/acceptlab-diagnose --port 35953 --duration 0.5 --json
