/work/main/bin/acceptlab-diagnose --port 50971 --duration 1.0 --json
