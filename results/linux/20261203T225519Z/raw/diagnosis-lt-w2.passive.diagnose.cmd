/work/main/bin/acceptlab-diagnose --port 41089 --duration 0.5 --json
