/work/main/bin/acceptlab-diagnose --port 41351 --duration 0.5 --json
