/work/main/bin/acceptlab-diagnose --port 40175 --duration 0.5 --json
