/work/main/bin/acceptlab-diagnose --port 42725 --duration 0.5 --json
