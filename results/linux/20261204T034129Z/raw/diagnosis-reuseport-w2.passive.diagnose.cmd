/work/main/bin/acceptlab-diagnose --port 43163 --duration 0.5 --json
