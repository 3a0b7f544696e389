/work/main/bin/acceptlab-diagnose --port 53727 --duration 1.0 --json
