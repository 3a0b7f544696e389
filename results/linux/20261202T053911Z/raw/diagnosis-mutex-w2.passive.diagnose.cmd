/work/main/bin/acceptlab-diagnose --port 44317 --duration 0.5 --json
