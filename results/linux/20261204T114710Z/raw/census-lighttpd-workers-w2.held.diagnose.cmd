/work/main/bin/acceptlab-diagnose --port 57061 --duration 1.0 --json
