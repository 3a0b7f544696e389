/work/main/bin/acceptlab-diagnose --port 44425 --duration 0.5 --json
