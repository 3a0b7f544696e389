/work/main/bin/acceptlab-diagnose --port 48605 --duration 1.0 --json
