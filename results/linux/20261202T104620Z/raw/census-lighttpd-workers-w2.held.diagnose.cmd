/work/main/bin/acceptlab-diagnose --port 49347 --duration 1.0 --json
