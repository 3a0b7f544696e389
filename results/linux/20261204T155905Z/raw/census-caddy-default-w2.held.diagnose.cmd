/work/main/bin/acceptlab-diagnose --port 57741 --duration 1.0 --json
