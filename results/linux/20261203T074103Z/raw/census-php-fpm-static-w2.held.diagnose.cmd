/work/main/bin/acceptlab-diagnose --port 42117 --duration 1.0 --json
