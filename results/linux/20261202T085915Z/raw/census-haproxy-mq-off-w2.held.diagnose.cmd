/work/main/bin/acceptlab-diagnose --port 34527 --duration 1.0 --json
