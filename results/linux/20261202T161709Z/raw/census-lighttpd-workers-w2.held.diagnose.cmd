/work/main/bin/acceptlab-diagnose --port 39119 --duration 1.0 --json
