/work/main/bin/acceptlab-diagnose --port 45613 --duration 0.5 --json
