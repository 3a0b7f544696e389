/work/main/bin/acceptlab-diagnose --port 39219 --duration 1.0 --json
