/work/main/bin/acceptlab-diagnose --port 56075 --duration 0.5 --json
