/work/main/bin/acceptlab-diagnose --port 57269 --duration 1.0 --json
