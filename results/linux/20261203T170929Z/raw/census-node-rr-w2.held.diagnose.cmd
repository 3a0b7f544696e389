/work/main/bin/acceptlab-diagnose --port 55927 --duration 1.0 --json
