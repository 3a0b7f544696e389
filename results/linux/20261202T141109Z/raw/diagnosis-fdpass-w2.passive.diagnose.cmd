/work/main/bin/acceptlab-diagnose --port 37033 --duration 0.5 --json
