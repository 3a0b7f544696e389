/work/main/bin/acceptlab-diagnose --port 41149 --duration 0.5 --json
