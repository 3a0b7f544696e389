/work/main/bin/acceptlab-diagnose --port 34683 --duration 1.0 --json
