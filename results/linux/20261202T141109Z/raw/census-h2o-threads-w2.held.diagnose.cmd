/work/main/bin/acceptlab-diagnose --port 51097 --duration 1.0 --json
