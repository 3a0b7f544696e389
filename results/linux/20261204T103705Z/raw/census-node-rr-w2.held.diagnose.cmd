/work/main/bin/acceptlab-diagnose --port 52325 --duration 1.0 --json
