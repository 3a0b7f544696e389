/work/main/bin/acceptlab-diagnose --port 37421 --duration 0.5 --json
