/work/main/bin/acceptlab-diagnose --port 56117 --duration 1.0 --json
