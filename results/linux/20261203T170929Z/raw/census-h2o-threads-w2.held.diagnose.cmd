/work/main/bin/acceptlab-diagnose --port 59221 --duration 1.0 --json
