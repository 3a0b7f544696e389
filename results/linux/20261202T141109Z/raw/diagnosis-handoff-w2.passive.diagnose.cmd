/work/main/bin/acceptlab-diagnose --port 46163 --duration 0.5 --json
