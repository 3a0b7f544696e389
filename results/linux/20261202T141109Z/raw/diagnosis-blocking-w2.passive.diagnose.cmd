/work/main/bin/acceptlab-diagnose --port 40993 --duration 0.5 --json
