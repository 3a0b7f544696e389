/work/main/bin/acceptlab-diagnose --port 46171 --duration 0.5 --json
