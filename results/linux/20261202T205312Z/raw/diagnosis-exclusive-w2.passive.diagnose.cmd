/work/main/bin/acceptlab-diagnose --port 41415 --duration 0.5 --json
