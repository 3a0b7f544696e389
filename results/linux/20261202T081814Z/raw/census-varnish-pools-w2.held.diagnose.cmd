/work/main/bin/acceptlab-diagnose --port 46429 --duration 1.0 --json
