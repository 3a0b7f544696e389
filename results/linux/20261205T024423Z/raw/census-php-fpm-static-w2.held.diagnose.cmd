/work/main/bin/acceptlab-diagnose --port 47731 --duration 1.0 --json
