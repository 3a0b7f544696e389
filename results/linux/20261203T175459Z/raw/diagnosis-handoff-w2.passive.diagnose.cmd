/work/main/bin/acceptlab-diagnose --port 44009 --duration 0.5 --json
