/work/main/bin/acceptlab-diagnose --port 43203 --duration 0.5 --json
