/work/main/bin/acceptlab-diagnose --port 53037 --duration 1.0 --json
