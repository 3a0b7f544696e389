/work/main/bin/acceptlab-diagnose --port 48237 --duration 0.5 --json
