/work/main/bin/acceptlab-diagnose --port 35293 --duration 1.0 --json
