/work/main/bin/acceptlab-diagnose --port 50709 --duration 1.0 --json
