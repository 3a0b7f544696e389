/work/main/bin/acceptlab-diagnose --port 39735 --duration 0.5 --json
