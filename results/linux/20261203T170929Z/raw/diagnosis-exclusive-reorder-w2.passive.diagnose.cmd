/work/main/bin/acceptlab-diagnose --port 36153 --duration 0.5 --json
