/work/main/bin/acceptlab-diagnose --port 44007 --duration 0.5 --json
