/work/main/bin/acceptlab-diagnose --port 34589 --duration 0.5 --json
