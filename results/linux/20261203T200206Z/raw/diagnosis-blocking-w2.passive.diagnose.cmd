/work/main/bin/acceptlab-diagnose --port 37259 --duration 0.5 --json
