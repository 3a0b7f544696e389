/work/main/bin/acceptlab-diagnose --port 40381 --duration 1.0 --json
