/work/main/bin/acceptlab-diagnose --port 51741 --duration 1.0 --json
