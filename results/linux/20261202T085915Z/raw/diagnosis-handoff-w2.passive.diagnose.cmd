/work/main/bin/acceptlab-diagnose --port 34391 --duration 0.5 --json
