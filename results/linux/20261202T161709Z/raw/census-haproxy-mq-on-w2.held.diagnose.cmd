/work/main/bin/acceptlab-diagnose --port 46185 --duration 1.0 --json
