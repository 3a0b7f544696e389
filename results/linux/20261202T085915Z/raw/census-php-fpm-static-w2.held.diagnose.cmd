/work/main/bin/acceptlab-diagnose --port 50507 --duration 1.0 --json
