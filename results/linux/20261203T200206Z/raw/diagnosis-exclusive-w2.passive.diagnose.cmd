/work/main/bin/acceptlab-diagnose --port 44349 --duration 0.5 --json
