/work/main/bin/acceptlab-diagnose --port 44909 --duration 0.5 --json
