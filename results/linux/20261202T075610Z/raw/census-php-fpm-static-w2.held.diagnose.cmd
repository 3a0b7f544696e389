/work/main/bin/acceptlab-diagnose --port 33717 --duration 1.0 --json
