/work/main/bin/acceptlab-diagnose --port 37555 --duration 0.5 --json
