/work/main/bin/acceptlab-diagnose --port 32911 --duration 0.5 --json
