/work/main/bin/acceptlab-diagnose --port 46893 --duration 1.0 --json
