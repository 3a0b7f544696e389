/work/main/bin/acceptlab-diagnose --port 42415 --duration 0.5 --json
