/work/main/bin/acceptlab-diagnose --port 35373 --duration 0.5 --json
