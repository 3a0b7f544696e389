/work/main/bin/acceptlab-diagnose --port 59297 --duration 1.0 --json
