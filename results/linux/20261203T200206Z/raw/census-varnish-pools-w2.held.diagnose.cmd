/work/main/bin/acceptlab-diagnose --port 39315 --duration 1.0 --json
