/work/main/bin/acceptlab-diagnose --port 35381 --duration 1.0 --json
