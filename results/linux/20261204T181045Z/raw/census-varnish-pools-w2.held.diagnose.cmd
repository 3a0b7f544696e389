/work/main/bin/acceptlab-diagnose --port 52709 --duration 1.0 --json
