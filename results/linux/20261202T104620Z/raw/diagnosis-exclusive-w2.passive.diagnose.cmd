/work/main/bin/acceptlab-diagnose --port 41433 --duration 0.5 --json
