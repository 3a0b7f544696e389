/work/main/bin/acceptlab-diagnose --port 50033 --duration 1.0 --json
