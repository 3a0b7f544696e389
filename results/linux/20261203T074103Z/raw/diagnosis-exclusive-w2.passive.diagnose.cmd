/work/main/bin/acceptlab-diagnose --port 36687 --duration 0.5 --json
