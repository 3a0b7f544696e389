/work/main/bin/acceptlab-diagnose --port 33853 --duration 1.0 --json
