/work/main/bin/acceptlab-diagnose --port 50415 --duration 1.0 --json
