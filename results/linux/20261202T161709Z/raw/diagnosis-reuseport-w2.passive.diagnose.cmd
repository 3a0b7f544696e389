/work/main/bin/acceptlab-diagnose --port 40971 --duration 0.5 --json
