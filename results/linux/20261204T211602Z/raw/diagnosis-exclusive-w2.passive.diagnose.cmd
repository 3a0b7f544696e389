/work/main/bin/acceptlab-diagnose --port 36155 --duration 0.5 --json
