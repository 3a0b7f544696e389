/work/main/bin/acceptlab-diagnose --port 40393 --duration 0.5 --json
