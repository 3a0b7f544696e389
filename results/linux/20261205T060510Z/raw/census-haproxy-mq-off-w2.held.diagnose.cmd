/work/main/bin/acceptlab-diagnose --port 47213 --duration 1.0 --json
