/work/main/bin/acceptlab-diagnose --port 44365 --duration 0.5 --json
