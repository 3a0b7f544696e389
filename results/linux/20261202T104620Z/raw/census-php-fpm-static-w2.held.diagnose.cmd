/work/main/bin/acceptlab-diagnose --port 53167 --duration 1.0 --json
