/work/main/bin/acceptlab-diagnose --port 33833 --duration 0.5 --json
