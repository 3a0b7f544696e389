/work/main/bin/acceptlab-diagnose --port 51583 --duration 1.0 --json
