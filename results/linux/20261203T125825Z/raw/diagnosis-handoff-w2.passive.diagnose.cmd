/work/main/bin/acceptlab-diagnose --port 36485 --duration 0.5 --json
