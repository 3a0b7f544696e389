/work/main/bin/acceptlab-diagnose --port 41883 --duration 0.5 --json
