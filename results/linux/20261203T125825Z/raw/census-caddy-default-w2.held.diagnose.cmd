/work/main/bin/acceptlab-diagnose --port 35395 --duration 1.0 --json
