/work/main/bin/acceptlab-diagnose --port 49847 --duration 1.0 --json
