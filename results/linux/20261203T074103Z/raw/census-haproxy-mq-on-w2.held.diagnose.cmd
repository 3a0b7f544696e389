/work/main/bin/acceptlab-diagnose --port 51297 --duration 1.0 --json
