/work/main/bin/acceptlab-diagnose --port 39931 --duration 0.5 --json
