/work/main/bin/acceptlab-diagnose --port 40589 --duration 0.5 --json
