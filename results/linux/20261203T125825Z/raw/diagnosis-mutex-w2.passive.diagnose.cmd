/work/main/bin/acceptlab-diagnose --port 36611 --duration 0.5 --json
