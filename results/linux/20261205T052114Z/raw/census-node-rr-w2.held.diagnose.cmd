/work/main/bin/acceptlab-diagnose --port 37411 --duration 1.0 --json
