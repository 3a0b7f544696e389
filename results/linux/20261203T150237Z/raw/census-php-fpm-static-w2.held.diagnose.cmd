/work/main/bin/acceptlab-diagnose --port 40431 --duration 1.0 --json
