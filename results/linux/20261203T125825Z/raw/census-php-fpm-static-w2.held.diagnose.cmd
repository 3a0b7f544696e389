/work/main/bin/acceptlab-diagnose --port 48439 --duration 1.0 --json
