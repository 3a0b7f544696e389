/work/main/bin/acceptlab-diagnose --port 44625 --duration 0.5 --json
