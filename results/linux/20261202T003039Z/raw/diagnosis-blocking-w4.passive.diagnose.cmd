/work/main/bin/acceptlab-diagnose --port 33539 --duration 0.5 --json
