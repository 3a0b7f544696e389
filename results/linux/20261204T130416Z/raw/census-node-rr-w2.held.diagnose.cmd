/work/main/bin/acceptlab-diagnose --port 50193 --duration 1.0 --json
