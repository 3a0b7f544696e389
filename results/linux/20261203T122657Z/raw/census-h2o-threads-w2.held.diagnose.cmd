/work/main/bin/acceptlab-diagnose --port 60669 --duration 1.0 --json
