/work/main/bin/acceptlab-diagnose --port 55127 --duration 1.0 --json
