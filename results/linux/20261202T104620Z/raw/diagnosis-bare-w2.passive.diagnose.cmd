/work/main/bin/acceptlab-diagnose --port 40695 --duration 0.5 --json
