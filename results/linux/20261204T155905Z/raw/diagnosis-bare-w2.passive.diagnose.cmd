/work/main/bin/acceptlab-diagnose --port 43395 --duration 0.5 --json
