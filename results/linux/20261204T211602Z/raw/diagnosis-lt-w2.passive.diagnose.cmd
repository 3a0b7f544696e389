/work/main/bin/acceptlab-diagnose --port 40307 --duration 0.5 --json
