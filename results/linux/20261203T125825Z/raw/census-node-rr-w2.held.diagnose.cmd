/work/main/bin/acceptlab-diagnose --port 44269 --duration 1.0 --json
