/work/main/bin/acceptlab-diagnose --port 40141 --duration 1.0 --json
