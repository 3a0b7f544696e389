/work/main/bin/acceptlab-diagnose --port 45075 --duration 0.5 --json
