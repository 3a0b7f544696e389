/work/main/bin/acceptlab-diagnose --port 39461 --duration 0.5 --json
