/work/main/bin/acceptlab-diagnose --port 37969 --duration 0.5 --json
