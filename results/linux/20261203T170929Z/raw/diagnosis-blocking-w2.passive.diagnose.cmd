/work/main/bin/acceptlab-diagnose --port 34591 --duration 0.5 --json
