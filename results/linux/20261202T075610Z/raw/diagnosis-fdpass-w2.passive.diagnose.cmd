/work/main/bin/acceptlab-diagnose --port 33677 --duration 0.5 --json
