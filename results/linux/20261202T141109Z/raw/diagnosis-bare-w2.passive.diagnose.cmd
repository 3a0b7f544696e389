/work/main/bin/acceptlab-diagnose --port 39127 --duration 0.5 --json
