/work/main/bin/acceptlab-diagnose --port 43893 --duration 0.5 --json
