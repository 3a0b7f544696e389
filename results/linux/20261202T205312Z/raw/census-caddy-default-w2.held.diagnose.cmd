/work/main/bin/acceptlab-diagnose --port 42943 --duration 1.0 --json
