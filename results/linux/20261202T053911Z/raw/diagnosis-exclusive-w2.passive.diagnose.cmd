/work/main/bin/acceptlab-diagnose --port 37009 --duration 0.5 --json
