/work/main/bin/acceptlab-diagnose --port 36075 --duration 0.5 --json
