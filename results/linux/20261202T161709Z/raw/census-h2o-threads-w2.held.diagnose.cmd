/work/main/bin/acceptlab-diagnose --port 60695 --duration 1.0 --json
