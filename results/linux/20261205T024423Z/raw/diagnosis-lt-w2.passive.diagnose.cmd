/work/main/bin/acceptlab-diagnose --port 45403 --duration 0.5 --json
