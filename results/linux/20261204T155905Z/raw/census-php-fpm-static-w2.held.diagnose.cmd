/work/main/bin/acceptlab-diagnose --port 49455 --duration 1.0 --json
