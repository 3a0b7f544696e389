/work/main/bin/acceptlab-diagnose --port 32925 --duration 1.0 --json
