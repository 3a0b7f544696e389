/work/main/bin/acceptlab-diagnose --port 36641 --duration 1.0 --json
