/work/main/bin/acceptlab-diagnose --port 43245 --duration 1.0 --json
