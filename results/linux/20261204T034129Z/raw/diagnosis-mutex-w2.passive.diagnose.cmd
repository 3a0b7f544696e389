/work/main/bin/acceptlab-diagnose --port 38931 --duration 0.5 --json
