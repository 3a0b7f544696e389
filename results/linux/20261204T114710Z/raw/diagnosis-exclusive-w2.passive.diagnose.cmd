/work/main/bin/acceptlab-diagnose --port 35127 --duration 0.5 --json
