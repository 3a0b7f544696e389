/work/main/bin/acceptlab-diagnose --port 57763 --duration 1.0 --json
