/work/main/bin/acceptlab-diagnose --port 45269 --duration 1.0 --json
