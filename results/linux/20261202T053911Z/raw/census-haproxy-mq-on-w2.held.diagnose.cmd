/work/main/bin/acceptlab-diagnose --port 40703 --duration 1.0 --json
