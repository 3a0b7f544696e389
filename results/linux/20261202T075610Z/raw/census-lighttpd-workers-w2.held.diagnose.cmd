/work/main/bin/acceptlab-diagnose --port 58319 --duration 1.0 --json
