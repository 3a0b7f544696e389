/work/main/bin/acceptlab-diagnose --port 55285 --duration 1.0 --json
