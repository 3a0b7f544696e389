/work/main/bin/acceptlab-diagnose --port 42215 --duration 0.5 --json
