/work/main/bin/acceptlab-diagnose --port 39929 --duration 0.5 --json
