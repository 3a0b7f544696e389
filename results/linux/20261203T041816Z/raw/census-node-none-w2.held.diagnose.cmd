/work/main/bin/acceptlab-diagnose --port 42107 --duration 1.0 --json
