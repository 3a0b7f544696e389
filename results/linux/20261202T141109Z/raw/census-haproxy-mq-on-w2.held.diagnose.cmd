/work/main/bin/acceptlab-diagnose --port 40875 --duration 1.0 --json
