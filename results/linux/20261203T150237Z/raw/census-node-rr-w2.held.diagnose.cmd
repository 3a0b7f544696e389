/work/main/bin/acceptlab-diagnose --port 45673 --duration 1.0 --json
