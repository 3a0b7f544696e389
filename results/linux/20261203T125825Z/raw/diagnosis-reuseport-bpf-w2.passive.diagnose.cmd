/work/main/bin/acceptlab-diagnose --port 46673 --duration 0.5 --json
