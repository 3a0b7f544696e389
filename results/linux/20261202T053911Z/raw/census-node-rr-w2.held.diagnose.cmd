/work/main/bin/acceptlab-diagnose --port 48615 --duration 1.0 --json
