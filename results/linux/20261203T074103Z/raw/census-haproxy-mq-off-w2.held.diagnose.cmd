/work/main/bin/acceptlab-diagnose --port 41843 --duration 1.0 --json
