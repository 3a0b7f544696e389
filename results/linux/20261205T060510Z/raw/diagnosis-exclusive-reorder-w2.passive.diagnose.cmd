/work/main/bin/acceptlab-diagnose --port 37567 --duration 0.5 --json
