/work/main/bin/acceptlab-diagnose --port 39735 --duration 1.0 --json
