/work/main/bin/acceptlab-diagnose --port 34289 --duration 0.5 --json
