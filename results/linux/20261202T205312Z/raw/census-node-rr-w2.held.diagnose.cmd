/work/main/bin/acceptlab-diagnose --port 35305 --duration 1.0 --json
