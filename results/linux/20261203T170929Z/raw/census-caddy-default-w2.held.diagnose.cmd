/work/main/bin/acceptlab-diagnose --port 55439 --duration 1.0 --json
