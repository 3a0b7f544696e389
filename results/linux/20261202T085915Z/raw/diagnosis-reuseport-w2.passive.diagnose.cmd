/work/main/bin/acceptlab-diagnose --port 35757 --duration 0.5 --json
