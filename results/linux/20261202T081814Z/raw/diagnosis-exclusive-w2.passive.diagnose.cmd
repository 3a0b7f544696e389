/work/main/bin/acceptlab-diagnose --port 34403 --duration 0.5 --json
