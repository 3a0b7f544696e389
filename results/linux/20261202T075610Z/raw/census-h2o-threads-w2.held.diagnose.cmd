/work/main/bin/acceptlab-diagnose --port 35497 --duration 1.0 --json
