/work/main/bin/acceptlab-diagnose --port 59051 --duration 1.0 --json
