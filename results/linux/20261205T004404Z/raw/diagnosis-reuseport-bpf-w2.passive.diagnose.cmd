/work/main/bin/acceptlab-diagnose --port 43463 --duration 0.5 --json
