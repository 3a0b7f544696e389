/work/main/bin/acceptlab-diagnose --port 49625 --duration 1.0 --json
