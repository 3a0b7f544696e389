/work/main/bin/acceptlab-diagnose --port 38575 --duration 1.0 --json
