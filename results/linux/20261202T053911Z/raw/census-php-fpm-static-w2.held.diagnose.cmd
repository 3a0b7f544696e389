/work/main/bin/acceptlab-diagnose --port 55077 --duration 1.0 --json
