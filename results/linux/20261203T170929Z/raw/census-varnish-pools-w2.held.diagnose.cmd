/work/main/bin/acceptlab-diagnose --port 56709 --duration 1.0 --json
