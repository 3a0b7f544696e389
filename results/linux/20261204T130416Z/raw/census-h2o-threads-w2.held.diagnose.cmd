/work/main/bin/acceptlab-diagnose --port 54531 --duration 1.0 --json
