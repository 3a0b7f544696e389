/work/main/bin/acceptlab-diagnose --port 38457 --duration 0.5 --json
