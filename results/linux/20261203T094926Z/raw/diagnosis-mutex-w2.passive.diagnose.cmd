/work/main/bin/acceptlab-diagnose --port 36723 --duration 0.5 --json
