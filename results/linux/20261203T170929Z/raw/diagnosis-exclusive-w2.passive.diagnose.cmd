/work/main/bin/acceptlab-diagnose --port 41649 --duration 0.5 --json
