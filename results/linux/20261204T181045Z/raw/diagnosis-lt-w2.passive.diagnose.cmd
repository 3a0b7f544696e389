/work/main/bin/acceptlab-diagnose --port 41015 --duration 0.5 --json
