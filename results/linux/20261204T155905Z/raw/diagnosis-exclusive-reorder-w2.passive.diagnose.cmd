/work/main/bin/acceptlab-diagnose --port 42023 --duration 0.5 --json
