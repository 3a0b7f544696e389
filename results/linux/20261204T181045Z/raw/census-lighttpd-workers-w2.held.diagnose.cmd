/work/main/bin/acceptlab-diagnose --port 57051 --duration 1.0 --json
