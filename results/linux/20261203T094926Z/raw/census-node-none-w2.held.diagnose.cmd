/work/main/bin/acceptlab-diagnose --port 45953 --duration 1.0 --json
