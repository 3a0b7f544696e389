/work/main/bin/acceptlab-diagnose --port 56439 --duration 1.0 --json
