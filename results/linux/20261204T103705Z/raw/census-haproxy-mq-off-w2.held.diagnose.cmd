/work/main/bin/acceptlab-diagnose --port 49741 --duration 1.0 --json
