/work/main/bin/acceptlab-diagnose --port 42427 --duration 0.5 --json
