/work/main/bin/acceptlab-diagnose --port 44065 --duration 0.5 --json
