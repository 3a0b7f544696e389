/work/main/bin/acceptlab-diagnose --port 33981 --duration 0.5 --json
