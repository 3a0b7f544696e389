/work/main/bin/acceptlab-diagnose --port 44803 --duration 0.5 --json
