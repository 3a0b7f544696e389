/work/main/bin/acceptlab-diagnose --port 32829 --duration 0.5 --json
