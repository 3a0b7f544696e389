/work/main/bin/acceptlab-diagnose --port 51069 --duration 1.0 --json
