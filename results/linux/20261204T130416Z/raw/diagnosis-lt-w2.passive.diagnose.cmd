/work/main/bin/acceptlab-diagnose --port 37945 --duration 0.5 --json
