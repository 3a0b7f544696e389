/work/main/bin/acceptlab-diagnose --port 37949 --duration 0.5 --json
