/work/main/bin/acceptlab-diagnose --port 57043 --duration 1.0 --json
