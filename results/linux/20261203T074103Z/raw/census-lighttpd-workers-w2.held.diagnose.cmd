/work/main/bin/acceptlab-diagnose --port 35357 --duration 1.0 --json
