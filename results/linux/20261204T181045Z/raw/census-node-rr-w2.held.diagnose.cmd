/work/main/bin/acceptlab-diagnose --port 60223 --duration 1.0 --json
