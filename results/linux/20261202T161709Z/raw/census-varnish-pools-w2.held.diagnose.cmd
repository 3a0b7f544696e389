/work/main/bin/acceptlab-diagnose --port 57809 --duration 1.0 --json
