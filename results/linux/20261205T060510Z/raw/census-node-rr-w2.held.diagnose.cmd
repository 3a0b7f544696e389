/work/main/bin/acceptlab-diagnose --port 39901 --duration 1.0 --json
