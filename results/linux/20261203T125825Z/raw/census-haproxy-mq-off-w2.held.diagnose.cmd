/work/main/bin/acceptlab-diagnose --port 37921 --duration 1.0 --json
