/work/main/bin/acceptlab-diagnose --port 45283 --duration 0.5 --json
