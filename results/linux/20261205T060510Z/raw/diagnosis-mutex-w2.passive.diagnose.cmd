/work/main/bin/acceptlab-diagnose --port 33187 --duration 0.5 --json
