/work/main/bin/acceptlab-diagnose --port 37693 --duration 0.5 --json
