/work/main/bin/acceptlab-diagnose --port 41641 --duration 0.5 --json
