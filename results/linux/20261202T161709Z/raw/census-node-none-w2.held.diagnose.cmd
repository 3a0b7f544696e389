/work/main/bin/acceptlab-diagnose --port 57185 --duration 1.0 --json
