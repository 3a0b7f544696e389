/work/main/bin/acceptlab-diagnose --port 36701 --duration 0.5 --json
