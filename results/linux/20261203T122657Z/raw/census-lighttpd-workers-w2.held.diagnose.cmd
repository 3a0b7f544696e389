/work/main/bin/acceptlab-diagnose --port 39757 --duration 1.0 --json
