/work/main/bin/acceptlab-diagnose --port 32897 --duration 1.0 --json
