/work/main/bin/acceptlab-diagnose --port 43721 --duration 0.5 --json
