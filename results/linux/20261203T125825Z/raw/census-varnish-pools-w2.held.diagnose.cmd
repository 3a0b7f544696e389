/work/main/bin/acceptlab-diagnose --port 59413 --duration 1.0 --json
