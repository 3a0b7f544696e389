/work/main/bin/acceptlab-diagnose --port 41729 --duration 1.0 --json
