/work/main/bin/acceptlab-diagnose --port 33363 --duration 0.5 --json
