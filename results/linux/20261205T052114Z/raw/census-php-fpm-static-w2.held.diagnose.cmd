/work/main/bin/acceptlab-diagnose --port 56233 --duration 1.0 --json
