/work/main/bin/acceptlab-diagnose --port 50509 --duration 1.0 --json
