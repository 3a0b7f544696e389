/work/main/bin/acceptlab-diagnose --port 40807 --duration 0.5 --json
