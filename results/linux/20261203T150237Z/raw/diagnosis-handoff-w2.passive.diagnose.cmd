/work/main/bin/acceptlab-diagnose --port 44747 --duration 0.5 --json
