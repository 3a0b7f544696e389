/work/main/bin/acceptlab-diagnose --port 47901 --duration 1.0 --json
