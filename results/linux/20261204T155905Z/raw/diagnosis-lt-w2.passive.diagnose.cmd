/work/main/bin/acceptlab-diagnose --port 40779 --duration 0.5 --json
