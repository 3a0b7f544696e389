/work/main/bin/acceptlab-diagnose --port 40223 --duration 0.5 --json
