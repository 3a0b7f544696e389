/work/main/bin/acceptlab-diagnose --port 42615 --duration 0.5 --json
