/work/main/bin/acceptlab-diagnose --port 33033 --duration 0.5 --json
