/work/main/bin/acceptlab-diagnose --port 37213 --duration 1.0 --json
