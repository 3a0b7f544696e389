/work/main/bin/acceptlab-diagnose --port 46791 --duration 1.0 --json
