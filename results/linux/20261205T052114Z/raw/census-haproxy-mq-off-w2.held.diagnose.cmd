/work/main/bin/acceptlab-diagnose --port 57521 --duration 1.0 --json
