/work/main/bin/acceptlab-diagnose --port 57687 --duration 1.0 --json
