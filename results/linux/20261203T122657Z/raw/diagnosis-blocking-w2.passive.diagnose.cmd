/work/main/bin/acceptlab-diagnose --port 33523 --duration 0.5 --json
