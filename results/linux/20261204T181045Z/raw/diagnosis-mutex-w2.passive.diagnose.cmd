/work/main/bin/acceptlab-diagnose --port 35167 --duration 0.5 --json
