/work/main/bin/acceptlab-diagnose --port 37351 --duration 1.0 --json
