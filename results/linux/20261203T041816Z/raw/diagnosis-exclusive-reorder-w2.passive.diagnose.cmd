/work/main/bin/acceptlab-diagnose --port 35899 --duration 0.5 --json
