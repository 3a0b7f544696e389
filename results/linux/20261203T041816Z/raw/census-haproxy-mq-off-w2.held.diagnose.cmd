/work/main/bin/acceptlab-diagnose --port 39103 --duration 1.0 --json
