/work/main/bin/acceptlab-diagnose --port 50073 --duration 1.0 --json
