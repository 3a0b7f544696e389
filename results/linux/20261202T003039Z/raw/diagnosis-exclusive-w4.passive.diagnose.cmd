/work/main/bin/acceptlab-diagnose --port 36251 --duration 0.5 --json
