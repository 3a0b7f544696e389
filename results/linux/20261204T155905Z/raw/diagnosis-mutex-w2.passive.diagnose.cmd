/work/main/bin/acceptlab-diagnose --port 33449 --duration 0.5 --json
