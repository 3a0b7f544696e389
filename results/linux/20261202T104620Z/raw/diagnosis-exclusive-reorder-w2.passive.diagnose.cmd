/work/main/bin/acceptlab-diagnose --port 35731 --duration 0.5 --json
