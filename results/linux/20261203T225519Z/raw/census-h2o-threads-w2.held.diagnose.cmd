/work/main/bin/acceptlab-diagnose --port 43277 --duration 1.0 --json
