/work/main/bin/acceptlab-diagnose --port 37903 --duration 1.0 --json
