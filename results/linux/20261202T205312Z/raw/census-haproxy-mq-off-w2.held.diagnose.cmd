/work/main/bin/acceptlab-diagnose --port 46809 --duration 1.0 --json
