/work/main/bin/acceptlab-diagnose --port 33407 --duration 1.0 --json
