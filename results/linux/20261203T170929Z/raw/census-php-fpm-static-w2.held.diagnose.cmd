/work/main/bin/acceptlab-diagnose --port 43879 --duration 1.0 --json
