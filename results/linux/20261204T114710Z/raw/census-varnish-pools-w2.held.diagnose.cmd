/work/main/bin/acceptlab-diagnose --port 57473 --duration 1.0 --json
