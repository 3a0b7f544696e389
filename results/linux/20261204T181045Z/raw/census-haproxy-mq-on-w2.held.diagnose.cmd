/work/main/bin/acceptlab-diagnose --port 36729 --duration 1.0 --json
