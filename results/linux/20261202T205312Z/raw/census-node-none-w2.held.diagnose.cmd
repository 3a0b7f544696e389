/work/main/bin/acceptlab-diagnose --port 35871 --duration 1.0 --json
