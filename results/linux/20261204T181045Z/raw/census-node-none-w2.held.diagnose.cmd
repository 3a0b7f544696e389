/work/main/bin/acceptlab-diagnose --port 37355 --duration 1.0 --json
