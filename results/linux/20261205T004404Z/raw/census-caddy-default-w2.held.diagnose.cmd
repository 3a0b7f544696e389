/work/main/bin/acceptlab-diagnose --port 44793 --duration 1.0 --json
