/work/main/bin/acceptlab-diagnose --port 36345 --duration 1.0 --json
