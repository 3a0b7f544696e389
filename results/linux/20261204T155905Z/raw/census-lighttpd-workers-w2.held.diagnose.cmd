/work/main/bin/acceptlab-diagnose --port 50983 --duration 1.0 --json
