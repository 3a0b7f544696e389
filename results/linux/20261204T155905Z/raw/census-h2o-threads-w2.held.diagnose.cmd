/work/main/bin/acceptlab-diagnose --port 50069 --duration 1.0 --json
