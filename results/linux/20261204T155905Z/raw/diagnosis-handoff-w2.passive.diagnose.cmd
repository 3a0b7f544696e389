/work/main/bin/acceptlab-diagnose --port 38169 --duration 0.5 --json
