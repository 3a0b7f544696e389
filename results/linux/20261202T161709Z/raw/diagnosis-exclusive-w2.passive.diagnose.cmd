/work/main/bin/acceptlab-diagnose --port 37293 --duration 0.5 --json
