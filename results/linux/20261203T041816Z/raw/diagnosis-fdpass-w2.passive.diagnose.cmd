/work/main/bin/acceptlab-diagnose --port 43057 --duration 0.5 --json
