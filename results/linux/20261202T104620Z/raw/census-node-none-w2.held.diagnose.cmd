/work/main/bin/acceptlab-diagnose --port 44531 --duration 1.0 --json
