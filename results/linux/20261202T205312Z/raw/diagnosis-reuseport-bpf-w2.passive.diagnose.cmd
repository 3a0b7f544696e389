/work/main/bin/acceptlab-diagnose --port 38263 --duration 0.5 --json
