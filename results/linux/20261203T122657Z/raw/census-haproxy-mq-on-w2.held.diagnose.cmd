/work/main/bin/acceptlab-diagnose --port 60101 --duration 1.0 --json
