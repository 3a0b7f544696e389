/work/main/bin/acceptlab-diagnose --port 60659 --duration 1.0 --json
