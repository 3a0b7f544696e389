/work/main/bin/acceptlab-diagnose --port 32881 --duration 1.0 --json
