/work/main/bin/acceptlab-diagnose --port 43943 --duration 0.5 --json
