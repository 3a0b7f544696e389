/work/main/bin/acceptlab-diagnose --port 55721 --duration 1.0 --json
