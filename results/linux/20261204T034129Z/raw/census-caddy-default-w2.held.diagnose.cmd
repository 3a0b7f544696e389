/work/main/bin/acceptlab-diagnose --port 60283 --duration 1.0 --json
