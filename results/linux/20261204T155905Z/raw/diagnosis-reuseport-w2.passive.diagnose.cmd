/work/main/bin/acceptlab-diagnose --port 39489 --duration 0.5 --json
