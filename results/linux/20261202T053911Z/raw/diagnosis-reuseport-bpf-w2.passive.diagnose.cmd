/work/main/bin/acceptlab-diagnose --port 44481 --duration 0.5 --json
