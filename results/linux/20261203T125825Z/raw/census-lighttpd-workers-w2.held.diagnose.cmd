/work/main/bin/acceptlab-diagnose --port 49547 --duration 1.0 --json
