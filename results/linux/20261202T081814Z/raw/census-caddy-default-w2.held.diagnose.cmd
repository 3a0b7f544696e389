/work/main/bin/acceptlab-diagnose --port 59835 --duration 1.0 --json
