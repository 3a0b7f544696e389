/work/main/bin/acceptlab-diagnose --port 40065 --duration 1.0 --json
