/work/main/bin/acceptlab-diagnose --port 46443 --duration 1.0 --json
