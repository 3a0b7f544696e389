/work/main/bin/acceptlab-diagnose --port 47725 --duration 1.0 --json
