/work/main/bin/acceptlab-diagnose --port 34767 --duration 0.5 --json
