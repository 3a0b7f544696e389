/work/main/bin/acceptlab-diagnose --port 42383 --duration 0.5 --json
