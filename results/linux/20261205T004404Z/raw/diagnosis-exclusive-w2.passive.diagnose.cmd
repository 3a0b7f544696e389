/work/main/bin/acceptlab-diagnose --port 36651 --duration 0.5 --json
