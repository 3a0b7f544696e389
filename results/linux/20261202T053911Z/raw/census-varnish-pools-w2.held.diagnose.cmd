/work/main/bin/acceptlab-diagnose --port 36789 --duration 1.0 --json
