/work/main/bin/acceptlab-diagnose --port 45177 --duration 1.0 --json
