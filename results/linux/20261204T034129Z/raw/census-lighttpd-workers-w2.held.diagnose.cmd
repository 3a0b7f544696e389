/work/main/bin/acceptlab-diagnose --port 45347 --duration 1.0 --json
