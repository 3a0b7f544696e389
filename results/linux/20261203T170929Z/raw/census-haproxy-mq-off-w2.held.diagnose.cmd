/work/main/bin/acceptlab-diagnose --port 38547 --duration 1.0 --json
