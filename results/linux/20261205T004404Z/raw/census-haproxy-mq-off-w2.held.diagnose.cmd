/work/main/bin/acceptlab-diagnose --port 48081 --duration 1.0 --json
