/work/main/bin/acceptlab-diagnose --port 33829 --duration 0.5 --json
