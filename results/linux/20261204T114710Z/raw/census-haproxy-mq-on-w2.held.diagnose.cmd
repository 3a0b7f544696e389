/work/main/bin/acceptlab-diagnose --port 55669 --duration 1.0 --json
