/work/main/bin/acceptlab-diagnose --port 44415 --duration 0.5 --json
