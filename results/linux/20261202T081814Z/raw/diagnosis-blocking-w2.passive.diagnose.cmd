/work/main/bin/acceptlab-diagnose --port 39835 --duration 0.5 --json
