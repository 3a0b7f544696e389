/work/main/bin/acceptlab-diagnose --port 48741 --duration 1.0 --json
