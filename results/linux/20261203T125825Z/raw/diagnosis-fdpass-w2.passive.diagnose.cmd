/work/main/bin/acceptlab-diagnose --port 38963 --duration 0.5 --json
