/work/main/bin/acceptlab-diagnose --port 35261 --duration 1.0 --json
