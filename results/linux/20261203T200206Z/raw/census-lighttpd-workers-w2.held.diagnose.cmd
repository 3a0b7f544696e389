/work/main/bin/acceptlab-diagnose --port 36227 --duration 1.0 --json
