/work/main/bin/acceptlab-diagnose --port 38975 --duration 0.5 --json
