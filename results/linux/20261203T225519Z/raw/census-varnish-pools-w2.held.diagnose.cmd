/work/main/bin/acceptlab-diagnose --port 37353 --duration 1.0 --json
