/work/main/bin/acceptlab-diagnose --port 43899 --duration 1.0 --json
