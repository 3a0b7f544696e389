/work/main/bin/acceptlab-diagnose --port 57399 --duration 1.0 --json
