/work/main/bin/acceptlab-diagnose --port 40305 --duration 0.5 --json
