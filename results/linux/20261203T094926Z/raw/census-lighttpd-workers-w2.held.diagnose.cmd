/work/main/bin/acceptlab-diagnose --port 39443 --duration 1.0 --json
