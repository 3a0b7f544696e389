/work/main/bin/acceptlab-diagnose --port 34113 --duration 0.5 --json
