/work/main/bin/acceptlab-diagnose --port 41747 --duration 1.0 --json
