/work/main/bin/acceptlab-diagnose --port 40269 --duration 1.0 --json
