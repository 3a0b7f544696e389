/work/main/bin/acceptlab-diagnose --port 44623 --duration 0.5 --json
