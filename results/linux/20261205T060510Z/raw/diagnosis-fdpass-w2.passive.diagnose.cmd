/work/main/bin/acceptlab-diagnose --port 43883 --duration 0.5 --json
