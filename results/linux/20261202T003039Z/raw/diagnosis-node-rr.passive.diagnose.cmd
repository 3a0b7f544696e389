/work/main/bin/acceptlab-diagnose --port 38993 --duration 0.5 --json
