/work/main/bin/acceptlab-diagnose --port 42845 --duration 0.5 --json
