/work/main/bin/acceptlab-diagnose --port 34317 --duration 0.5 --json
