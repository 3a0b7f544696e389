/work/main/bin/acceptlab-diagnose --port 38981 --duration 1.0 --json
