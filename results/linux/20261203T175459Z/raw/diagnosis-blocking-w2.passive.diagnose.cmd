/work/main/bin/acceptlab-diagnose --port 44989 --duration 0.5 --json
