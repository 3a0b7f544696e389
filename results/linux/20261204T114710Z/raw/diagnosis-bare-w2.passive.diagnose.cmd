/work/main/bin/acceptlab-diagnose --port 43659 --duration 0.5 --json
