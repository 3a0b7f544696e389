/work/main/bin/acceptlab-diagnose --port 34929 --duration 0.5 --json
