/work/main/bin/acceptlab-diagnose --port 46149 --duration 0.5 --json
