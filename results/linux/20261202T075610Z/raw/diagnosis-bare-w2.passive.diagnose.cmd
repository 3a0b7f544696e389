/work/main/bin/acceptlab-diagnose --port 33737 --duration 0.5 --json
