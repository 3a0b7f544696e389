/work/main/bin/acceptlab-diagnose --port 42101 --duration 0.5 --json
