/work/main/bin/acceptlab-diagnose --port 36639 --duration 0.5 --json
