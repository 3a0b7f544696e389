/work/main/bin/acceptlab-diagnose --port 37939 --duration 0.5 --json
