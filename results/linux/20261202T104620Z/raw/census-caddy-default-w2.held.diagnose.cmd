/work/main/bin/acceptlab-diagnose --port 34477 --duration 1.0 --json
