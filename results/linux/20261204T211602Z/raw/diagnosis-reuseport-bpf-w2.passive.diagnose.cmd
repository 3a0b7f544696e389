/work/main/bin/acceptlab-diagnose --port 42659 --duration 0.5 --json
