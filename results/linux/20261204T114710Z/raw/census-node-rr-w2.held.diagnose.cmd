/work/main/bin/acceptlab-diagnose --port 49341 --duration 1.0 --json
