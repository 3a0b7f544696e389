/work/main/bin/acceptlab-diagnose --port 54151 --duration 1.0 --json
