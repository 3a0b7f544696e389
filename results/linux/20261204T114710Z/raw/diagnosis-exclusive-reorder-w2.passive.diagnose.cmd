/work/main/bin/acceptlab-diagnose --port 38377 --duration 0.5 --json
