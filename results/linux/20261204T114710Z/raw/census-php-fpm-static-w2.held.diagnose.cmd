/work/main/bin/acceptlab-diagnose --port 39855 --duration 1.0 --json
