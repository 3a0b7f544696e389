/work/main/bin/acceptlab-diagnose --port 33973 --duration 0.5 --json
