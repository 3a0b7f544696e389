/work/main/bin/acceptlab-diagnose --port 53409 --duration 1.0 --json
