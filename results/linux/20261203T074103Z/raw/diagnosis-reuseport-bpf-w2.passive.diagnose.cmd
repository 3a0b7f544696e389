/work/main/bin/acceptlab-diagnose --port 46771 --duration 0.5 --json
