/work/main/bin/acceptlab-diagnose --port 49249 --duration 1.0 --json
