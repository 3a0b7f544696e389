/work/main/bin/acceptlab-diagnose --port 40663 --duration 0.5 --json
