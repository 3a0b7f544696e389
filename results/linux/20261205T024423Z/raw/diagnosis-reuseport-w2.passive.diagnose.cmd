/work/main/bin/acceptlab-diagnose --port 45591 --duration 0.5 --json
