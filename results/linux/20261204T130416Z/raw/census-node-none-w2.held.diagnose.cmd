/work/main/bin/acceptlab-diagnose --port 35401 --duration 1.0 --json
