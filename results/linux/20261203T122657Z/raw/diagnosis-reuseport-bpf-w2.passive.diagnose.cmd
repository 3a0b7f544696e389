/work/main/bin/acceptlab-diagnose --port 39437 --duration 0.5 --json
