/work/main/bin/acceptlab-diagnose --port 44255 --duration 0.5 --json
