/work/main/bin/acceptlab-diagnose --port 36727 --duration 0.5 --json
