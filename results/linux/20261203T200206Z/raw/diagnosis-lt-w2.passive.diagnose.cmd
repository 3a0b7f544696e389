/work/main/bin/acceptlab-diagnose --port 35565 --duration 0.5 --json
