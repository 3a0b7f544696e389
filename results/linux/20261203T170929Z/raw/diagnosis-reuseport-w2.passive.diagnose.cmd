/work/main/bin/acceptlab-diagnose --port 41231 --duration 0.5 --json
