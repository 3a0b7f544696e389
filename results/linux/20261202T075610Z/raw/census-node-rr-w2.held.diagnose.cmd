/work/main/bin/acceptlab-diagnose --port 34901 --duration 1.0 --json
