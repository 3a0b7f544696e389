/work/main/bin/acceptlab-diagnose --port 45565 --duration 1.0 --json
