/work/main/bin/acceptlab-diagnose --port 37137 --duration 0.5 --json
