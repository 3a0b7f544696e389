/work/main/bin/acceptlab-diagnose --port 57073 --duration 1.0 --json
