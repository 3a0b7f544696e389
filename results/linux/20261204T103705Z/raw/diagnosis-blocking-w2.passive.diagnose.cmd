/work/main/bin/acceptlab-diagnose --port 45057 --duration 0.5 --json
