/work/main/bin/acceptlab-diagnose --port 40757 --duration 0.5 --json
