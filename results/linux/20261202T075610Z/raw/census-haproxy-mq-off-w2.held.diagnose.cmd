/work/main/bin/acceptlab-diagnose --port 50927 --duration 1.0 --json
