/work/main/bin/acceptlab-diagnose --port 35439 --duration 0.5 --json
