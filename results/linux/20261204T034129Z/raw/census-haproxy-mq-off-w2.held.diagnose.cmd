/work/main/bin/acceptlab-diagnose --port 42525 --duration 1.0 --json
