/work/main/bin/acceptlab-diagnose --port 36425 --duration 0.5 --json
