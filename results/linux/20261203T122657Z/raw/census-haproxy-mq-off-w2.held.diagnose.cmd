/work/main/bin/acceptlab-diagnose --port 52483 --duration 1.0 --json
