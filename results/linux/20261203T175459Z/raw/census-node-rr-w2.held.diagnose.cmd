/work/main/bin/acceptlab-diagnose --port 40207 --duration 1.0 --json
