/work/main/bin/acceptlab-diagnose --port 39597 --duration 0.5 --json
