/work/main/bin/acceptlab-diagnose --port 42781 --duration 0.5 --json
