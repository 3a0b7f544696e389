/work/main/bin/acceptlab-diagnose --port 48311 --duration 1.0 --json
