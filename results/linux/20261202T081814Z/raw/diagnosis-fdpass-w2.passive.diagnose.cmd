/work/main/bin/acceptlab-diagnose --port 46333 --duration 0.5 --json
