/work/main/bin/acceptlab-diagnose --port 58271 --duration 1.0 --json
