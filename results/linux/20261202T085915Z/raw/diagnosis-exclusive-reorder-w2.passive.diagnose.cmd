/work/main/bin/acceptlab-diagnose --port 33467 --duration 0.5 --json
