/work/main/bin/acceptlab-diagnose --port 34061 --duration 1.0 --json
