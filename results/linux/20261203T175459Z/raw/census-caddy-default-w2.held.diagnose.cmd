/work/main/bin/acceptlab-diagnose --port 50093 --duration 1.0 --json
