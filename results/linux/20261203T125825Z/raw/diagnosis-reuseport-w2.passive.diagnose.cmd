/work/main/bin/acceptlab-diagnose --port 39115 --duration 0.5 --json
