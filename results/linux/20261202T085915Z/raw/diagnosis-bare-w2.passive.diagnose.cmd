/work/main/bin/acceptlab-diagnose --port 45333 --duration 0.5 --json
