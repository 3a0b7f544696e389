/work/main/bin/acceptlab-diagnose --port 44501 --duration 0.5 --json
