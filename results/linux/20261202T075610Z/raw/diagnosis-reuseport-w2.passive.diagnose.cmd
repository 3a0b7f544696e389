/work/main/bin/acceptlab-diagnose --port 41589 --duration 0.5 --json
