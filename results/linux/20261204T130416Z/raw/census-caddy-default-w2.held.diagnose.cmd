/work/main/bin/acceptlab-diagnose --port 58999 --duration 1.0 --json
