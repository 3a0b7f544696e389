/work/main/bin/acceptlab-diagnose --port 44639 --duration 1.0 --json
