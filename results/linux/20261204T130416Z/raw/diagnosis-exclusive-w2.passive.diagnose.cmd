/work/main/bin/acceptlab-diagnose --port 33129 --duration 0.5 --json
