/work/main/bin/acceptlab-diagnose --port 40809 --duration 1.0 --json
