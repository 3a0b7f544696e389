/work/main/bin/acceptlab-diagnose --port 41447 --duration 1.0 --json
