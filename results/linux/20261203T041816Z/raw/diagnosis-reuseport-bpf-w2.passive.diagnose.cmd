/work/main/bin/acceptlab-diagnose --port 41993 --duration 0.5 --json
