/work/main/bin/acceptlab-diagnose --port 50213 --duration 1.0 --json
