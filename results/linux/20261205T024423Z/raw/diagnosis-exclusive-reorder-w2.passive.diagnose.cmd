/work/main/bin/acceptlab-diagnose --port 45799 --duration 0.5 --json
