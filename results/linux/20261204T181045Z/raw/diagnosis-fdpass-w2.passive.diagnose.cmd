/work/main/bin/acceptlab-diagnose --port 36351 --duration 0.5 --json
