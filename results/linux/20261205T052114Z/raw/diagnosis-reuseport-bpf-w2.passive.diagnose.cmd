/work/main/bin/acceptlab-diagnose --port 44243 --duration 0.5 --json
