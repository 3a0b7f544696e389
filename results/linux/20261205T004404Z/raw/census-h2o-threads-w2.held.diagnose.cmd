/work/main/bin/acceptlab-diagnose --port 60819 --duration 1.0 --json
