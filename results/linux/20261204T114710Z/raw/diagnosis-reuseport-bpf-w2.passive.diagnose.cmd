/work/main/bin/acceptlab-diagnose --port 35853 --duration 0.5 --json
