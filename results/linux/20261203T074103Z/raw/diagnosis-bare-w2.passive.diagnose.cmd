/work/main/bin/acceptlab-diagnose --port 37143 --duration 0.5 --json
