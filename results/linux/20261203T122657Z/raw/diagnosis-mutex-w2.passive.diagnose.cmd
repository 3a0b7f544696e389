/work/main/bin/acceptlab-diagnose --port 39357 --duration 0.5 --json
