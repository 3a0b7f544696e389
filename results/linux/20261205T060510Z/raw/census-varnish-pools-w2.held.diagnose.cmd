/work/main/bin/acceptlab-diagnose --port 60053 --duration 1.0 --json
