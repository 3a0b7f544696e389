/work/main/bin/acceptlab-diagnose --port 60145 --duration 1.0 --json
