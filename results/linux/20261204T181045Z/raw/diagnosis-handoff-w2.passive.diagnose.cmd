/work/main/bin/acceptlab-diagnose --port 37913 --duration 0.5 --json
