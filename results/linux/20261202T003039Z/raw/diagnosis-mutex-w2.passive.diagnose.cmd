/work/main/bin/acceptlab-diagnose --port 34425 --duration 0.5 --json
