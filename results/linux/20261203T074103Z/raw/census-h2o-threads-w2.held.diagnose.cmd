/work/main/bin/acceptlab-diagnose --port 47867 --duration 1.0 --json
