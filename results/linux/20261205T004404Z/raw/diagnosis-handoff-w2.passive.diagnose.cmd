/work/main/bin/acceptlab-diagnose --port 33169 --duration 0.5 --json
