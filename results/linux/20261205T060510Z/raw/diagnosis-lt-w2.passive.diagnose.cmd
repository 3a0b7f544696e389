/work/main/bin/acceptlab-diagnose --port 45169 --duration 0.5 --json
