/work/main/bin/acceptlab-diagnose --port 43289 --duration 0.5 --json
