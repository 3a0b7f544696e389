/work/main/bin/acceptlab-diagnose --port 55705 --duration 1.0 --json
