/work/main/bin/acceptlab-diagnose --port 56681 --duration 1.0 --json
