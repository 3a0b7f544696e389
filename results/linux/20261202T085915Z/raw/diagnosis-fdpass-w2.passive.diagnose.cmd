/work/main/bin/acceptlab-diagnose --port 43415 --duration 0.5 --json
