/work/main/bin/acceptlab-diagnose --port 36411 --duration 1.0 --json
