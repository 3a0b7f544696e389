/work/main/bin/acceptlab-diagnose --port 44829 --duration 0.5 --json
