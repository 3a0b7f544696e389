/work/main/bin/acceptlab-diagnose --port 48851 --duration 1.0 --json
