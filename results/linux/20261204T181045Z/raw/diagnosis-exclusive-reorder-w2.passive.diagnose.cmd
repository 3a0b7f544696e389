/work/main/bin/acceptlab-diagnose --port 44213 --duration 0.5 --json
