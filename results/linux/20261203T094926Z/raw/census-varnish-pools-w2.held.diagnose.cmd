/work/main/bin/acceptlab-diagnose --port 59161 --duration 1.0 --json
