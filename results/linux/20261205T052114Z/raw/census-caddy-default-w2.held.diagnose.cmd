/work/main/bin/acceptlab-diagnose --port 41321 --duration 1.0 --json
