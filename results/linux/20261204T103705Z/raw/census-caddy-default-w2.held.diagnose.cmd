/work/main/bin/acceptlab-diagnose --port 41109 --duration 1.0 --json
