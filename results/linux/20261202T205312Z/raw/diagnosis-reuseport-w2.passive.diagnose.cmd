/work/main/bin/acceptlab-diagnose --port 45993 --duration 0.5 --json
