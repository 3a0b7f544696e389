/work/main/bin/acceptlab-diagnose --port 60439 --duration 1.0 --json
