/work/main/bin/acceptlab-diagnose --port 41785 --duration 0.5 --json
