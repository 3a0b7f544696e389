/work/main/bin/acceptlab-diagnose --port 33159 --duration 0.5 --json
