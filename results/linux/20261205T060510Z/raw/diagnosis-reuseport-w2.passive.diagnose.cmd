/work/main/bin/acceptlab-diagnose --port 37703 --duration 0.5 --json
