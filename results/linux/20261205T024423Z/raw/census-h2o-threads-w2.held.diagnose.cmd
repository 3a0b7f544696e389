/work/main/bin/acceptlab-diagnose --port 48609 --duration 1.0 --json
