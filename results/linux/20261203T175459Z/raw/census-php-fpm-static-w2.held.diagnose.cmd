/work/main/bin/acceptlab-diagnose --port 58049 --duration 1.0 --json
