/work/main/bin/acceptlab-diagnose --port 44427 --duration 1.0 --json
