/work/main/bin/acceptlab-diagnose --port 48283 --duration 1.0 --json
