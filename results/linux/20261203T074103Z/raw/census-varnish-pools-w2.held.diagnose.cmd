/work/main/bin/acceptlab-diagnose --port 40593 --duration 1.0 --json
