/work/main/bin/acceptlab-diagnose --port 45749 --duration 1.0 --json
