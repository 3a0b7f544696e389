/work/main/bin/acceptlab-diagnose --port 41323 --duration 1.0 --json
