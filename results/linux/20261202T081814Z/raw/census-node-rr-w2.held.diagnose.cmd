/work/main/bin/acceptlab-diagnose --port 43509 --duration 1.0 --json
