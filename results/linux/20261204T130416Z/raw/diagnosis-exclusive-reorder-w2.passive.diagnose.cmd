/work/main/bin/acceptlab-diagnose --port 38739 --duration 0.5 --json
