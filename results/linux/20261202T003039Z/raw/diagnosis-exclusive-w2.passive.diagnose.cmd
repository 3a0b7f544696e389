/work/main/bin/acceptlab-diagnose --port 37491 --duration 0.5 --json
