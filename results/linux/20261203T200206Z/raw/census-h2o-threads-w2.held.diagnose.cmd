/work/main/bin/acceptlab-diagnose --port 49925 --duration 1.0 --json
