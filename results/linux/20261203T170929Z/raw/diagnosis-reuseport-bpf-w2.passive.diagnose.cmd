/work/main/bin/acceptlab-diagnose --port 33435 --duration 0.5 --json
