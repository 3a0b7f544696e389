/work/main/bin/acceptlab-diagnose --port 45483 --duration 0.5 --json
