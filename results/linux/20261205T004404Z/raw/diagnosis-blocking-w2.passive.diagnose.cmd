/work/main/bin/acceptlab-diagnose --port 33505 --duration 0.5 --json
