/work/main/bin/acceptlab-diagnose --port 37621 --duration 0.5 --json
