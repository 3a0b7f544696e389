/work/main/bin/acceptlab-diagnose --port 46773 --duration 0.5 --json
