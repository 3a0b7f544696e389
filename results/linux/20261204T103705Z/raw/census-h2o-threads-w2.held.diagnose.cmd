/work/main/bin/acceptlab-diagnose --port 42453 --duration 1.0 --json
