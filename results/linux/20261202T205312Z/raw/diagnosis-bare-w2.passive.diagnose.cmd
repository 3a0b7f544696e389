/work/main/bin/acceptlab-diagnose --port 43339 --duration 0.5 --json
