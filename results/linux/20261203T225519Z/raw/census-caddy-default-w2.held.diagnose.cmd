/work/main/bin/acceptlab-diagnose --port 51061 --duration 1.0 --json
