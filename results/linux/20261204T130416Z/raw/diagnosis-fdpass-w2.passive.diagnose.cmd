/work/main/bin/acceptlab-diagnose --port 46715 --duration 0.5 --json
