/work/main/bin/acceptlab-diagnose --port 35777 --duration 0.5 --json
