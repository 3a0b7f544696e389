/work/main/bin/acceptlab-diagnose --port 46271 --duration 1.0 --json
