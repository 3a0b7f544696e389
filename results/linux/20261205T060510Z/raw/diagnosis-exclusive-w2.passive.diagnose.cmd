/work/main/bin/acceptlab-diagnose --port 41097 --duration 0.5 --json
