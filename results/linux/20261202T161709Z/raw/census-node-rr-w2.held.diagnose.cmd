/work/main/bin/acceptlab-diagnose --port 46581 --duration 1.0 --json
