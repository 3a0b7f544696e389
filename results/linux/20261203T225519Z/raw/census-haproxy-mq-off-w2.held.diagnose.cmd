/work/main/bin/acceptlab-diagnose --port 44667 --duration 1.0 --json
