/work/main/bin/acceptlab-diagnose --port 39417 --duration 0.5 --json
