/work/main/bin/acceptlab-diagnose --port 58241 --duration 1.0 --json
