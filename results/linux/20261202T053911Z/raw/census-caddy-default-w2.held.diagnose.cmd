/work/main/bin/acceptlab-diagnose --port 42033 --duration 1.0 --json
