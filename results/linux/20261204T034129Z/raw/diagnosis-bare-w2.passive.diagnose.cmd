/work/main/bin/acceptlab-diagnose --port 39745 --duration 0.5 --json
