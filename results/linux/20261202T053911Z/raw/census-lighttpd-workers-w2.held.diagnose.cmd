/work/main/bin/acceptlab-diagnose --port 47751 --duration 1.0 --json
