/work/main/bin/acceptlab-diagnose --port 56361 --duration 1.0 --json
