/work/main/bin/acceptlab-diagnose --port 33835 --duration 0.5 --json
