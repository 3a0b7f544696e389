/work/main/bin/acceptlab-diagnose --port 46029 --duration 0.5 --json
