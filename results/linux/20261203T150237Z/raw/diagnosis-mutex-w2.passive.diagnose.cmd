/work/main/bin/acceptlab-diagnose --port 46097 --duration 0.5 --json
