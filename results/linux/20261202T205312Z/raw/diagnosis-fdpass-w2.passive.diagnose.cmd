/work/main/bin/acceptlab-diagnose --port 38789 --duration 0.5 --json
