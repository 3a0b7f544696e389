/work/main/bin/acceptlab-diagnose --port 54127 --duration 1.0 --json
