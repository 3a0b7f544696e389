/work/main/bin/acceptlab-diagnose --port 37529 --duration 1.0 --json
