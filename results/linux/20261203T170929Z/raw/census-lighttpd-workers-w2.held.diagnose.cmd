/work/main/bin/acceptlab-diagnose --port 54615 --duration 1.0 --json
