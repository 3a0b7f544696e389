/work/main/bin/acceptlab-diagnose --port 41283 --duration 0.5 --json
