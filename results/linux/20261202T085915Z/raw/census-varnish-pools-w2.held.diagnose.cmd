/work/main/bin/acceptlab-diagnose --port 58539 --duration 1.0 --json
