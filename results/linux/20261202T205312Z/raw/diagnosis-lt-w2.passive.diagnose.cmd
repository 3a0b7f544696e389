/work/main/bin/acceptlab-diagnose --port 38007 --duration 0.5 --json
