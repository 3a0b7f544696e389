/work/main/bin/acceptlab-diagnose --port 40497 --duration 0.5 --json
