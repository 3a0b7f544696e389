/work/main/bin/acceptlab-diagnose --port 37075 --duration 0.5 --json
