/work/main/bin/acceptlab-diagnose --port 45431 --duration 0.5 --json
