/work/main/bin/acceptlab-diagnose --port 55197 --duration 1.0 --json
