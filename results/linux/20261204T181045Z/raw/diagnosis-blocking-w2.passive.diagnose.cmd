/work/main/bin/acceptlab-diagnose --port 43707 --duration 0.5 --json
