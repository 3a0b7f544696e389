/work/main/bin/acceptlab-diagnose --port 55627 --duration 1.0 --json
