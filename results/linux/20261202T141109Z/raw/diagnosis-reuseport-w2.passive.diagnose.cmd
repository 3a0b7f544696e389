/work/main/bin/acceptlab-diagnose --port 45243 --duration 0.5 --json
