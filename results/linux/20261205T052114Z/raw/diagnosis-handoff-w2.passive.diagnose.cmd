/work/main/bin/acceptlab-diagnose --port 43425 --duration 0.5 --json
