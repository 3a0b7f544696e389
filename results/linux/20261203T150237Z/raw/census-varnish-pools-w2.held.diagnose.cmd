/work/main/bin/acceptlab-diagnose --port 44223 --duration 1.0 --json
