/work/main/bin/acceptlab-diagnose --port 37679 --duration 0.5 --json
