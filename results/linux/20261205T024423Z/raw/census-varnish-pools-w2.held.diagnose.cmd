/work/main/bin/acceptlab-diagnose --port 50051 --duration 1.0 --json
