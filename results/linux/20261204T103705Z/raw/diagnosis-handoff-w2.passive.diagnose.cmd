/work/main/bin/acceptlab-diagnose --port 34927 --duration 0.5 --json
