/work/main/bin/acceptlab-diagnose --port 34581 --duration 0.5 --json
