/work/main/bin/acceptlab-diagnose --port 39003 --duration 0.5 --json
