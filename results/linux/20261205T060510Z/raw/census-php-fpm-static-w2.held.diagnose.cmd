/work/main/bin/acceptlab-diagnose --port 39131 --duration 1.0 --json
