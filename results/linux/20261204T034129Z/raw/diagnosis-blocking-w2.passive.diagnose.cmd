/work/main/bin/acceptlab-diagnose --port 42375 --duration 0.5 --json
