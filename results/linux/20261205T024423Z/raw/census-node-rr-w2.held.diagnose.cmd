/work/main/bin/acceptlab-diagnose --port 49405 --duration 1.0 --json
