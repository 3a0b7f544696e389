/work/main/bin/acceptlab-diagnose --port 43833 --duration 0.5 --json
