/work/main/bin/acceptlab-diagnose --port 44669 --duration 1.0 --json
