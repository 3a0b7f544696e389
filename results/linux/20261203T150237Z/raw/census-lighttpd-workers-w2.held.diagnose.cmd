/work/main/bin/acceptlab-diagnose --port 48525 --duration 1.0 --json
