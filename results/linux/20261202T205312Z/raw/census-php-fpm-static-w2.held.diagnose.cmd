/work/main/bin/acceptlab-diagnose --port 42931 --duration 1.0 --json
