/work/main/bin/acceptlab-diagnose --port 46077 --duration 0.5 --json
