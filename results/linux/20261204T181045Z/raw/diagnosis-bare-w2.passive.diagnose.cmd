/work/main/bin/acceptlab-diagnose --port 45825 --duration 0.5 --json
