/work/main/bin/acceptlab-diagnose --port 45929 --duration 0.5 --json
