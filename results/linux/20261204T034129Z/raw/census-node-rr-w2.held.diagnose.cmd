/work/main/bin/acceptlab-diagnose --port 59305 --duration 1.0 --json
