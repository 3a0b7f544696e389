/work/main/bin/acceptlab-diagnose --port 34209 --duration 0.5 --json
