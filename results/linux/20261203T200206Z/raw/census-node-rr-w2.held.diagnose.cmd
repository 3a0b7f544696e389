/work/main/bin/acceptlab-diagnose --port 50841 --duration 1.0 --json
