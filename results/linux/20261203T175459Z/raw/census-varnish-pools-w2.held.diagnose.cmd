/work/main/bin/acceptlab-diagnose --port 55991 --duration 1.0 --json
