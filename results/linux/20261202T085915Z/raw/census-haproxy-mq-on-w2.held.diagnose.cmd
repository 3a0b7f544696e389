/work/main/bin/acceptlab-diagnose --port 39291 --duration 1.0 --json
