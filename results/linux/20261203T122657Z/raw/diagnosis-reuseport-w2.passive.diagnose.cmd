/work/main/bin/acceptlab-diagnose --port 41333 --duration 0.5 --json
