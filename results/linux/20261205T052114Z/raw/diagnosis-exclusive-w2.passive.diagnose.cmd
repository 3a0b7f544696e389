/work/main/bin/acceptlab-diagnose --port 41259 --duration 0.5 --json
