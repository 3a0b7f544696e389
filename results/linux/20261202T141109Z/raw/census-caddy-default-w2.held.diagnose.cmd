/work/main/bin/acceptlab-diagnose --port 52743 --duration 1.0 --json
