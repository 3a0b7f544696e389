/work/main/bin/acceptlab-diagnose --port 42363 --duration 1.0 --json
