/work/main/bin/acceptlab-diagnose --port 45743 --duration 1.0 --json
