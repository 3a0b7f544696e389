/work/main/bin/acceptlab-diagnose --port 33355 --duration 0.5 --json
