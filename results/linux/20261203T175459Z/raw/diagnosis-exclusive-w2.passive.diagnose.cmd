/work/main/bin/acceptlab-diagnose --port 36315 --duration 0.5 --json
