/work/main/bin/acceptlab-diagnose --port 34677 --duration 1.0 --json
