/work/main/bin/acceptlab-diagnose --port 41391 --duration 0.5 --json
