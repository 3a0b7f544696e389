/work/main/bin/acceptlab-diagnose --port 43303 --duration 0.5 --json
