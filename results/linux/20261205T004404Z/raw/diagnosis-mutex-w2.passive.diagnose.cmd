/work/main/bin/acceptlab-diagnose --port 33625 --duration 0.5 --json
