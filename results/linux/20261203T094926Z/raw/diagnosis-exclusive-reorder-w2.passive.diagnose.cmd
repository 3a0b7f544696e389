/work/main/bin/acceptlab-diagnose --port 46143 --duration 0.5 --json
