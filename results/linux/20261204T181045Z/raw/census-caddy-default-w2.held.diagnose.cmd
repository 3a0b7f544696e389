/work/main/bin/acceptlab-diagnose --port 44105 --duration 1.0 --json
