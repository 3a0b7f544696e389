/work/main/bin/acceptlab-diagnose --port 34275 --duration 1.0 --json
