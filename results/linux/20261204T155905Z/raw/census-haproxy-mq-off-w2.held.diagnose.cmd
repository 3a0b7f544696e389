/work/main/bin/acceptlab-diagnose --port 44295 --duration 1.0 --json
