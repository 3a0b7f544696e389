/work/main/bin/acceptlab-diagnose --port 39117 --duration 0.5 --json
