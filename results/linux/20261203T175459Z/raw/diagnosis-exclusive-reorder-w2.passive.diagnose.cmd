/work/main/bin/acceptlab-diagnose --port 39553 --duration 0.5 --json
