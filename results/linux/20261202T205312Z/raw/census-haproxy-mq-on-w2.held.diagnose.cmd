/work/main/bin/acceptlab-diagnose --port 46769 --duration 1.0 --json
