/work/main/bin/acceptlab-diagnose --port 47357 --duration 1.0 --json
