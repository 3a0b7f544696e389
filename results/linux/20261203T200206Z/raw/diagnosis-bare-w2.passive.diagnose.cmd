/work/main/bin/acceptlab-diagnose --port 43313 --duration 0.5 --json
