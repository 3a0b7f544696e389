/work/main/bin/acceptlab-diagnose --port 49285 --duration 1.0 --json
